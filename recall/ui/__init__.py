"""``recall ui``: a local web page of what recall knows and what it put in front of Claude (see
docs/ui.md). ``server`` (the HTTP server on 127.0.0.1), ``guard`` (token, cookie, Host, Origin,
CSRF, CSP), ``views`` (what each page shows, read with the CLI's own functions), ``pages`` (the
HTML), ``charts`` (inline SVG), ``actions`` (the page's writes), ``op`` (the service's "ui" op,
which starts the server in the service the first time it is asked), ``static/`` (ui.js, ui.css)."""
