"""The static site: pages from the sweeps and from the history store, their common HTML and the
assets they load (publishing the built site is orchestrator.publish's).

Public API: the modules below; other packages import only these names
(`from orchestrator.site import build`), never a name starting with `_`.

- `build`: The static site: `interregion site --out DIR` from the sweeps under results/.
- `history_pages`: The site's pages built from the history store: the matrix, the changes and the
  pairs.
- `html`: The pages' common parts: the header and footer, the EMULATED banner, JSON in a page, and
  a file written whole (or in place, into a folder being built). Shared by the site's sweep pages
  (orchestrator.site) and its history pages (orchestrator.site.history_pages).
"""

__all__ = [
    "build",
    "history_pages",
    "html",
]
