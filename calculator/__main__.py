import gc

gc.disable()  # for the imports below, as for the command's own (calculator.cli.parser.without_collection)
from calculator.cli import main  # noqa: E402 - after the collector is off

gc.enable()
raise SystemExit(main())
