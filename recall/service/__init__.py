"""The background service (``recall serve``).

``daemon``         the ``Service``: watcher, the one index writer, backfill
``socket_server``  the unix socket the edges' requests come in on
``registry``       the op registry
``ops/``           the ops, one module per feature
"""
