from calculator.cli import main

raise SystemExit(main())
