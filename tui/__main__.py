from ranktop.tui.cli.main import main

raise SystemExit(main())
