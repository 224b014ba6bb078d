"""Search: query terms, the searcher and its ranking, snippets, the hit type, and
``run_search`` (the service first, else in-process).

  ``query``       terms, stopwords, common terms, word families (decide -> decision)
  ``words``       prompt stopwords and framing words (standard library only)
  ``searcher``    queries, ranking, hits
  ``merged``      the one ranking of memories with transcripts, for ``recall ask`` and the MCP tools
  ``confidence``  the calibrated confidence that a hit bears on a query, its features and the
                  hook's decision: it gates the hook and orders every search
  ``common_words`` common English words, generated from wordfreq: in the order of every search, a
                  word the history never said counts as "never said" only when it is not one
  ``snippets``    a window of a hit's text around its matches, in **bold**
  ``hit``         ``Hit``, one search result, as every edge passes it
  ``index_open``  the index opened to read, with the readers' one-line errors (no searcher)
  ``exchange``    the reply a question got, the question a reply answered
  ``stale``       each hit's marks: the files it names or its session wrote that changed since;
                  what ``recall show``/``sessions`` say of a session's files, with git
  ``minilm``      all-MiniLM-L6-v2, the sentence encoder (int8 ONNX, its WordPiece tokenizer;
                  ``data/`` holds the vocabulary)
  ``semantic``    the semantic channel: messages embedded in the background, the sessions nearest
                  a prompt in meaning, for the prompt hook's model path
  ``fused``       words and meaning in one ranking, where people search (the service's search, MCP)
  ``timespec``    ``--since``
  ``run``         the service first, else in-process; whether the index is behind (a search
                  that found nothing says so)
"""
