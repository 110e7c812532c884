import sys

from bcast_lint.cli import main

sys.exit(main())
