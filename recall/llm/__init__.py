"""Calls to the model: the Messages API client with its usage log and daily cap, and the
synthesis prompts.
"""
