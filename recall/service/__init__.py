"""The background service (``recall serve``): the daemon that owns the index writer, its socket
server, the op registry and the ops.
"""
