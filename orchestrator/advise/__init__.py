"""`interregion advise`: how long a transfer between two regions takes and what wins the time
back, from the best figures available for the pair.

Public API: the modules below; other packages import only these names
(`from orchestrator.advise import model`), never a name starting with `_`.

- `model`: How long a transfer between two regions takes, and what wins the time back.
- `sources`: Where `interregion advise` gets a pair's figures, newest first:
"""

__all__ = [
    "model",
    "sources",
]
