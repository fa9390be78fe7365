"""`python -m yiem.store seed-demo N`: fill the store with N rows of demo usage."""

import sys

from yiem.store._store import main

sys.exit(main())
