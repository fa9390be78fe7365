"""`python -m yiem.chat configured-provider`: the provider whose key the server has, for `make run`."""

import sys

from yiem.chat._settings import main

sys.exit(main(sys.argv))
