"""The HTTP doors: REST with API keys, mem0's routes, LangServe runnables, MCP over HTTP, the review page
and its API, metrics. Each door turns its caller into a principal (server.auth) and asks the core for scope.

`app.create_app` builds what the doors share (`served.Served`: the memory, the key ring, the metrics) and
includes one router per route group, each in its own module (`memory_routes`, `judgment_routes`,
`health_routes`, `mem0_routes`, `langserve_routes`, `ui_routes`, ...).

May import: api and everything below it. Never the CLI.
"""
