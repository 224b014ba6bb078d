"""What Claude Code runs for each hook event (``recall hook NAME``). Keep them thin: parse
stdin, call library code, print JSON.

  ``dispatch``            stdin, output, always exit 0
  ``user_prompt_submit``  the prompt hook (its logic is ``recall.prompt``)
  ``capture``             the memory capture events
  ``plugin``              run by the plugin: stand down where ``recall setup`` wired the event,
                          start the service
"""
