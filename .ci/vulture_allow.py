"""The dead-code check's allow list (`.ci/run`: vulture src/notedex .ci/vulture_allow.py).

vulture reads this file as code, so every name below counts as used. Each is used in a way
vulture cannot see; a name that is really dead is deleted instead of listed here (issue 34).
"""

_ = object()

# Signatures fixed by their callers: signal handlers, the MCP SDK's tool callbacks.
_.frame
_.ctx
# Set for the interpreter or a library to read.
_.unraisablehook  # sys.unraisablehook
_.row_factory  # sqlite3 cursors
_.__getattr__  # module-level lazy attributes (PEP 562)
_.dispatch  # watchdog's event handler
_.on_thread_start  # watchdog's BaseObserver hook
_._add_callback  # watchdog's inotify buffer
_._emitter_class  # watchdog's observer
_._activate  # watchdog's inotify watch group (its __post_init__ calls it)
_._is_active  # watchdog's inotify watch group reads it
_.yaml_implicit_resolvers  # PyYAML's resolver table
_.has_location  # a module spec's, which the import system reads (cli.preload)
_.submodule_search_locations  # a package spec's, which the import system reads (cli.preload)
# json.JSONDecoder's attributes, which the C scanner (_json.make_scanner) reads.
_.strict
_.object_hook
_.object_pairs_hook
_.parse_float
_.parse_int
_.parse_constant
# A type alias used in string annotations.
_.StrPath
# Read by the tests as the observable state of a running part (the daemon's batcher and
# watcher, the reconcile's report): what the daemon tests wait on.
_.hints_added
_.rescan_pending
_.tasks_pending
_.fallback_reason
_.hashed
# Public API pinned by its own tests: the fast path's kinds (docs), a parsed link's
# self-reference, a tag's parents, the YAML 1.2 loader, a twin pinned equal to a view.
_.FAST_KINDS
_.is_self
_.prefixes
_.load_properties
_.dirty_link_texts
