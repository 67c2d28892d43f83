"""`interregion advise`: how long a transfer between two regions takes and what wins the time
back, from the best figures available for the pair.

Public API: the modules below; other packages import only these names
(`from orchestrator.advise import model`), never a name starting with `_`.

- `model`: How long a transfer between two regions takes, and what wins the time back.
- `sources`: Where `interregion advise` gets a pair's figures, newest first:
- `transfer`: `advise_transfer(AdviseRequest) -> TransferAdvice`: the command's use case, from the
  options as given to the advice and its JSON document.
- `spread`: How far `advise`'s figures can be off: a low-high range of each option's time, and
  the loss rate below which its estimate holds.
"""

__all__ = [
    "model",
    "sources",
    "spread",
    "transfer",
]
