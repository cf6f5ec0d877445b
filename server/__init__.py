"""The HTTP doors: REST with API keys, mem0's routes, LangServe runnables, MCP over HTTP, the review page
and its API, metrics. Each door turns its caller into a principal (server.auth) and asks the core for scope.

May import: api and everything below it. Never the CLI.
"""
