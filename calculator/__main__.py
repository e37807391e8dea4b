from calculator.cli.parser import main

raise SystemExit(main())
