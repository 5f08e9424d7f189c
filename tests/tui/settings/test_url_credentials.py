"""A ``user:password@`` in the Prometheus URL is taken out of it as the settings are read,
and is a secret from then on: in the Authorization header an error page echoes, in
``check-config``, in error lines, and in what ``ranktop init`` prints and writes."""

from __future__ import annotations

import base64
import io
import json
import stat

import pytest
from ranktop.tui.cli.check_config import check_config
from ranktop.tui.cli.init import PASSWORD_FILE, init_config
from ranktop.tui.settings.config import load_settings
from ranktop.tui.settings.reader import ConfigError
from ranktop.tui.sources.prometheus.client import PromClient, QueryError

from tests.tui.scripted_http import Scripted

USER, PASSWORD = "alice", "pw:Zq81/secret"  # a colon and a slash, percent-encoded in URLs
IN_URL = "alice:pw%3AZq81%2Fsecret"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
FORMS = (PASSWORD, IN_URL, "pw%3AZq81", BASIC)
EMPTY = json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}})


def with_userinfo(url: str) -> str:
    return url.replace("://", f"://{IN_URL}@")


def settings(url: str, environ: dict[str, str] | None = None, **prometheus):
    return load_settings(overrides={"prometheus": {"url": url, **prometheus}},
                         environ=environ or {})


def assert_no_secret(text: str) -> None:
    assert not [form for form in FORMS if form in text], text


def test_the_url_loses_its_userinfo_to_username_and_a_secret():
    prom = settings(with_userinfo("https://prom.example:9090/prefix/")).prometheus
    assert prom.url == "https://prom.example:9090/prefix"
    assert (prom.username, prom.password.value) == (USER, PASSWORD)
    assert_no_secret(repr(prom))


def test_a_user_given_twice_is_refused_without_showing_the_password():
    with pytest.raises(ConfigError, match="give them once") as caught:
        settings(with_userinfo("http://prom.example"), {"RANKTOP_PASSWORD": "other"})
    assert_no_secret(str(caught.value))


def test_a_bad_url_is_named_without_its_password():
    with pytest.raises(ConfigError, match="port") as caught:
        settings(with_userinfo("http://prom.example:99999"))
    assert "***@prom.example" in str(caught.value)
    assert_no_secret(str(caught.value))


def test_an_alertmanager_url_with_a_password_is_refused_without_showing_it():
    with pytest.raises(ConfigError, match="must not hold a user or password") as caught:
        load_settings(overrides={"alertmanager": {"url": with_userinfo("http://am:9093")}},
                      environ={})
    assert_no_secret(str(caught.value))


def test_an_error_page_echoing_the_header_shows_no_credential(server):
    Scripted.reply = (401, "text/plain", f"denied: Authorization: Basic {BASIC}")
    client = PromClient(settings(with_userinfo(server)).prometheus)
    with pytest.raises(QueryError) as caught:
        client.query("up")
    assert Scripted.seen["headers"]["Authorization"] == f"Basic {BASIC}"  # it was sent
    assert_no_secret(str(caught.value))


def test_check_config_shows_no_credential(server):
    Scripted.reply = (401, "text/plain", f"denied: Authorization: Basic {BASIC}")
    out = io.StringIO()
    assert check_config(settings(with_userinfo(server)), out) == 1
    assert "basic auth as 'alice', password ***" in out.getvalue()
    assert_no_secret(out.getvalue())


def test_init_writes_the_password_to_its_own_file_and_never_prints_it(server, tmp_path):
    Scripted.reply = (200, "application/json", EMPTY)
    target = tmp_path / "ranktop" / "config.toml"
    out, err = io.StringIO(), io.StringIO()
    assert init_config(settings(with_userinfo(server)), target, out, err) == 0
    secret = target.with_name(PASSWORD_FILE)
    assert secret.read_text() == PASSWORD + "\n"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    text = target.read_text()
    assert f'password_file = "{secret}"' in text and 'username = "alice"' in text
    assert_no_secret(out.getvalue() + err.getvalue() + text)
    again = load_settings(config_file=target, environ={}).prometheus  # the file works
    assert (again.username, again.password.value, again.url) == (USER, PASSWORD, server)


def test_init_refers_to_a_password_file_it_was_given(server, tmp_path):
    Scripted.reply = (200, "application/json", EMPTY)
    given = tmp_path / "mine"
    given.write_text(PASSWORD + "\n")
    target = tmp_path / "config.toml"
    prom = settings(server, username=USER, password_file=str(given))
    assert init_config(prom, target, io.StringIO(), io.StringIO()) == 0
    assert f'password_file = "{given}"' in target.read_text()
    assert not target.with_name(PASSWORD_FILE).exists()


def test_init_cannot_read_says_so_without_the_password(tmp_path):
    err = io.StringIO()
    url = with_userinfo("http://127.0.0.1:9")
    assert init_config(settings(url, timeout_seconds=1), tmp_path / "c.toml",
                       io.StringIO(), err) == 1
    assert "cannot read http://127.0.0.1:9" in err.getvalue()
    assert_no_secret(err.getvalue())
    assert not list(tmp_path.iterdir())
