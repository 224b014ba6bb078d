"""Calls to the model, on whichever backend is set, with the usage log and the daily cap.

``backend``       ``model.backend``: which one and why
``credentials``   finding an API key
``errors``        ``NoKey``, ``ModelError``, ``CapReached``; error text scrubbed of keys
``usage``         the usage log and the daily cap, for every backend
``messages_api``  the ``api`` backend: the SDK client
``claude_code``   the ``claude-code`` backend: Claude Code's own login, headless
``synthesis``     the hook's synthesis and ``recall ask``'s answer
"""
