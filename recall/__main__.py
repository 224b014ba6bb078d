"""``python -m recall ...``: the ``recall`` console script (``recall.entry``), for when the
script is not on PATH."""

import sys

from recall.entry import main

if __name__ == "__main__":
    sys.exit(main())
