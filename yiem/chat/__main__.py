"""`python -m yiem.chat configured-provider`: the provider whose key the server has, for `make run`."""

import sys

from yiem.model_setup import configured_provider


def main(argv: list[str]) -> int:
    """Prints the configured provider; exit 1 when there is none."""
    if argv[1:] != ["configured-provider"]:
        print("usage: python -m yiem.chat configured-provider", file=sys.stderr)
        return 2
    provider = configured_provider()
    if provider is None:
        return 1
    print(provider)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
