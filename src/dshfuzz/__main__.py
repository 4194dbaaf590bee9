import sys

from dshfuzz.cli import main

sys.exit(main())
