import gc
import sys

gc.disable()  # for the imports below, as for the command's own (calculator.cli.parser.without_collection)
try:
    from calculator.cli import main
except KeyboardInterrupt:  # Ctrl-C while starting: one line, as during a command (calculator.cli.parser.main)
    print("interrupted (Ctrl-C); nothing was left half-written", file=sys.stderr)
    raise SystemExit(130) from None

gc.enable()
raise SystemExit(main())
