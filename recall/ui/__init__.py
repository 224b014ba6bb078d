"""``recall ui``: a local web page of what recall knows and what it put in front of Claude (see
docs/ui.md). It reads what the CLI reads; the service serves it, the CLI starts it.

  ``server``   the standard library's HTTP server on 127.0.0.1, in a thread of the service or
               of ``recall ui``
  ``guard``    the token and its cookie, the loopback ``Host``, ``Origin`` and CSRF checks, the CSP
  ``views``    what each page shows, read with the functions the CLI calls, through the same gate
  ``pages``    the HTML, every text escaped
  ``charts``   inline SVG
  ``actions``  the page's writes: mark wrong, forget, a memory's edit, pin and forget
  ``op``       the service's "ui" op, added by ``recall serve`` before the service starts
               (``registry.add_module``): it starts the server in the service the first time
               it is asked
  ``static/``  ui.js, ui.css
"""
