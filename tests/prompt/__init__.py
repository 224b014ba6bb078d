"""recall/prompt/ and the UserPromptSubmit hook: trivial prompts, candidates, the block, no echo, was it used."""
