"""The base every layer stands on: tenant scopes, text normalisation, relative dates, mem0-style filters, the
in-process event bus, the chit-chat rule and the lexicon (language knowledge as data, one file per language).
Settings and errors sit beside this package at the root.

May import: memoryx.settings, memoryx.errors and third-party libraries only.
"""
