"""``python -m hotrank <command>``: ``archive`` (see :mod:`hotrank.archive`), ``server``
(see :mod:`hotrank.server`)."""

from __future__ import annotations

import sys


def main() -> int:
    if len(sys.argv) >= 2 and sys.argv[1] == "server":
        from .server import main as server

        return server(sys.argv[2:])
    if len(sys.argv) < 2 or sys.argv[1] != "archive":
        print("usage: python -m hotrank archive --redis URL --board K [--board K …] [--to URL] [--every 1h]", file=sys.stderr)
        print("       python -m hotrank server [--port N] [--redis-server PATH]", file=sys.stderr)
        return 2
    from .archive import main as archive

    return archive(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
