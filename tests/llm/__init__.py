"""recall/llm/: the model backends and the credentials a call uses."""
