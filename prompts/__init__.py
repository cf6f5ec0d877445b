"""The prompts of the model calls, as module constants, each beside the parser of its own input format.

May import: core only.
"""
