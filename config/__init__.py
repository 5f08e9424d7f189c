"""ranktop's shipped configuration: defaults, the demo scenario, example configs and the
Prometheus alerting rules. Data only; found through ``importlib.resources``."""
