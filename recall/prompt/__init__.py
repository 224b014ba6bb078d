"""The prompt hook's logic: which prompts are trivial, the search for candidates, the injected
block, and the pipeline with its deadlines.
"""
