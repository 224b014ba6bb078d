"""The prompt hook's logic: which prompts are trivial, the search for candidates, the injected
block, and the pipeline with its deadlines.

  ``trivial``     the prompts not worth a search
  ``candidates``  this project's hits, minus this session, above ``hook.min_confidence``
  ``block``       the ``<recalled-context>`` block
  ``context``     the pipeline and its deadlines
  ``ways``        which way a prompt takes: nothing, raw, the model waited for, or in the background
  ``turns``       whether a conversation's turn ended, so a late briefing never reaches another prompt
  ``settings``    the hook's settings
  ``injections``  the log ``recall log`` reads
  ``used``        whether the reply after an injection used it, read from the archive
  ``stats``       ``recall stats``: prompts, injections, used and silent shares, misses per week
"""
