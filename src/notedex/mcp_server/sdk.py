"""The SDK shim: the MCP SDK (the optional extra ``notedex[mcp]``) around the stdlib tools.

Only this module imports the SDK, and only inside its functions, so the rest of the server is
testable without it and ``notedex mcp`` without the extra says in one line how to install it.
It answers the handshake and ``tools/list`` at once, runs each call off the event loop with its
deadline (a call that overruns is answered with an error while the server keeps serving), answers
``resources/list`` and ``resources/read`` the same way (their errors are JSON-RPC errors, as the
protocol wants), turns tool results and errors into MCP tool results (``isError``, never a
crashed server) for SDK 1.x and 2.x alike, and serves over stdio, answering every line it cannot
read as a message with a JSON-RPC error (``invalid``) instead of dropping it.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from typing import Any

from notedex.config import Config
from notedex.errors import UsageError
from notedex.mcp_server.handlers import DEFAULT_TIMEOUT, VaultTools
from notedex.mcp_server.invalid import invalid_message_reply
from notedex.mcp_server.resources import ResourceError
from notedex.mcp_server.tools import INSTRUCTIONS, ToolError

STOP_CHECK_SECONDS = 0.5
"""How often the main thread, waiting for the event loop's thread, checks for a stop signal that
the kernel delivered to another thread (``serve``)."""
INSTALL_HINT = "notedex mcp needs the MCP SDK, an optional extra: pip install 'notedex[mcp]'"


def require_sdk() -> None:
    """UsageError (exit 2, one line) with the install command when the SDK is missing."""
    import importlib

    try:
        importlib.import_module("mcp.server.lowlevel")
        importlib.import_module("mcp.server.stdio")
    except ImportError:
        raise UsageError(INSTALL_HINT) from None


async def run_tool(
    tools: VaultTools, name: str, arguments: dict[str, Any] | None
) -> tuple[dict[str, Any] | None, str | None]:
    """One call with its deadline, off the event loop: (result, None), or (the error's structured
    data or None, error message)."""
    import anyio
    import anyio.to_thread

    deadline = time.monotonic() + tools.timeout
    call = functools.partial(tools.call, name, arguments, deadline)
    try:
        # A little grace after the deadline: SQLite is interrupted at the deadline itself.
        with anyio.fail_after(tools.timeout + 1.0):
            return await anyio.to_thread.run_sync(call, abandon_on_cancel=True), None
    except TimeoutError:
        return None, tools.deadline_message(name)
    except ToolError as exc:
        return exc.data, str(exc)
    except Exception as exc:  # a bug must cost one call, not the server
        return None, f"internal error in {name}: {type(exc).__name__}: {exc}"


INTERNAL_ERROR = -32603


def protocol_error(code: int, message: str, data: Any = None) -> Exception:
    """The SDK's exception that becomes a JSON-RPC error response (2.x ``MCPError``, 1.x
    ``McpError``)."""
    from mcp.shared import exceptions

    if hasattr(exceptions, "MCPError"):
        return exceptions.MCPError(code, message, data)
    from mcp.types import ErrorData

    legacy: Any = exceptions  # 1.x names, which mypy does not see in a 2.x install
    error: Exception = legacy.McpError(ErrorData(code=code, message=message, data=data))
    return error


async def run_resource(tools: VaultTools, method: str, argument: str | None) -> dict[str, Any]:
    """``resources/list`` (argument: the cursor) or ``resources/read`` (the URI) off the event
    loop with the call deadline: the result's wire shape, or the protocol error raised."""
    import anyio
    import anyio.to_thread

    deadline = time.monotonic() + tools.timeout
    call: Callable[[], dict[str, Any]]
    if method == "resources/list":
        call = functools.partial(tools.list_resources, argument, deadline)
    else:
        call = functools.partial(tools.read_resource, argument or "", deadline)
    try:
        with anyio.fail_after(tools.timeout + 1.0):
            result: dict[str, Any] = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
            return result
    except TimeoutError:
        raise protocol_error(INTERNAL_ERROR, f"notedex: {tools.deadline_message(method)}") from None
    except ResourceError as exc:
        data = {"uri": exc.uri} if exc.uri is not None else None
        raise protocol_error(exc.code, f"notedex: {exc}", data) from None
    except ToolError as exc:
        raise protocol_error(INTERNAL_ERROR, f"notedex: {exc}") from None
    except Exception as exc:  # a bug must cost one request, not the server
        message = f"notedex: internal error in {method}: {type(exc).__name__}: {exc}"
        raise protocol_error(INTERNAL_ERROR, message) from None


def result_wire(result: dict[str, Any] | None, error: str | None) -> dict[str, Any]:
    """A CallToolResult as MCP sends it: the JSON as text, and as structured content. An error
    is its message, and ``result`` (when given) its structured content (``ToolError.data``)."""
    if error is not None:
        wire: dict[str, Any] = {
            "content": [{"type": "text", "text": f"notedex: {error}"}],
            "isError": True,
        }
        if result is not None:
            wire["structuredContent"] = result
        return wire
    text = json.dumps(result, ensure_ascii=False, default=str)
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": result,
        "isError": False,
    }


def build_server(tools: VaultTools) -> Any:
    """A low-level MCP server for whichever SDK is installed (2.x ``on_*`` handlers or 1.x
    decorators); the tools, schemas and results are the same."""
    import inspect

    import mcp.types as types
    from mcp.server.lowlevel import Server

    from notedex import __version__

    tool_models = [types.Tool.model_validate(spec.wire()) for spec in tools.specs]
    params = inspect.signature(Server.__init__).parameters
    extra: dict[str, Any] = {"instructions": INSTRUCTIONS} if "instructions" in params else {}

    if "on_call_tool" in params:  # SDK 2.x

        async def on_list_tools(ctx: Any, params: Any) -> Any:
            return types.ListToolsResult(tools=tool_models)

        async def on_call_tool(ctx: Any, params: Any) -> Any:
            result, error = await run_tool(tools, params.name, params.arguments)
            return types.CallToolResult.model_validate(result_wire(result, error))

        async def on_list_resources(ctx: Any, params: Any) -> Any:
            cursor = params.cursor if params is not None else None
            page = await run_resource(tools, "resources/list", cursor)
            return types.ListResourcesResult.model_validate(page)

        async def on_read_resource(ctx: Any, params: Any) -> Any:
            note = await run_resource(tools, "resources/read", str(params.uri))
            return types.ReadResourceResult.model_validate(note)

        return Server(
            "notedex",
            version=__version__,
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
            on_list_resources=on_list_resources,
            on_read_resource=on_read_resource,
            **extra,
        )

    server: Any = Server("notedex", version=__version__, **extra)  # SDK 1.x

    async def list_tools() -> list[Any]:
        return tool_models

    async def call_tool(name: str, arguments: dict[str, Any] | None) -> list[Any]:
        result, error = await run_tool(tools, name, arguments)
        if error is not None:
            raise ToolError(f"notedex: {error}")  # 1.x turns this into an isError result
        wire = result_wire(result, None)
        return [types.TextContent.model_validate(block) for block in wire["content"]]

    server.list_tools()(list_tools)
    decorator_params = inspect.signature(server.call_tool).parameters
    register = (
        server.call_tool(validate_input=False)
        if "validate_input" in decorator_params
        else server.call_tool()
    )
    register(call_tool)

    # 1.x's resource decorators drop the cursor: the requests are registered as they do it.
    legacy: Any = types  # 1.x names, which mypy does not see in a 2.x install

    async def list_resources(request: Any) -> Any:
        cursor = request.params.cursor if request.params is not None else None
        page = await run_resource(tools, "resources/list", cursor)
        return legacy.ServerResult(legacy.ListResourcesResult.model_validate(page))

    async def read_resource(request: Any) -> Any:
        note = await run_resource(tools, "resources/read", str(request.params.uri))
        return legacy.ServerResult(legacy.ReadResourceResult.model_validate(note))

    server.request_handlers[legacy.ListResourcesRequest] = list_resources
    server.request_handlers[legacy.ReadResourceRequest] = read_resource
    return server


async def answer_unreadable(read_stream: Any, write_stream: Any, checked: Any) -> None:
    """Pass the transport's messages on to ``checked``; answer each line it could not read (an
    exception in the stream, which the server would drop) with its JSON-RPC error, so no client
    waits on an id forever (``invalid``)."""
    from mcp.shared.message import SessionMessage

    async with checked:
        async for item in read_stream:
            if not isinstance(item, Exception):
                await checked.send(item)
                continue
            reply = invalid_message_reply(item)
            message = wire_message(reply) if reply is not None else None
            if message is not None:
                await write_stream.send(SessionMessage(message))


def wire_message(data: dict[str, Any]) -> Any:
    """``data`` as the SDK's JSON-RPC message (2.x: the union's adapter; 1.x: ``JSONRPCMessage``);
    None when this SDK cannot spell it (1.x has no null id)."""
    import mcp.types as types

    adapter = getattr(types, "jsonrpc_message_adapter", None)
    try:
        if adapter is not None:
            return adapter.validate_python(data)
        legacy: Any = types  # 1.x names, which mypy does not see in a 2.x install
        return legacy.JSONRPCMessage.model_validate(data)
    except ValueError:  # pydantic's ValidationError
        return None


def serve(
    cfg: Config,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    refresh: bool = True,
    allow_capture: bool = False,
) -> int:
    """Serve MCP over stdin/stdout until the client goes away."""
    require_sdk()
    import threading

    import anyio
    from mcp.server.stdio import stdio_server

    tools = VaultTools(cfg, timeout=timeout, refresh=refresh, allow_capture=allow_capture)
    server = build_server(tools)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            checked_send, checked = anyio.create_memory_object_stream[Any](0)
            async with anyio.create_task_group() as group:
                group.start_soon(answer_unreadable, read_stream, write_stream, checked_send)
                await server.run(checked, write_stream, server.create_initialization_options())
                group.cancel_scope.cancel()

    failed: list[BaseException] = []

    def run_loop() -> None:
        try:
            anyio.run(main)
        except BaseException as exc:  # raised again in the main thread, below
            failed.append(exc)

    # The event loop runs in a thread of its own and the main thread only waits for it: a stop
    # signal (cli's handler raises KeyboardInterrupt in the main thread) then never lands inside
    # the loop. When it did (the loop's thread was the main thread), it could interrupt one of
    # the SDK's task steps half-way: the loop's shutdown then logged the task's traceback, or
    # waited for good on a task nobody would wake.
    loop = threading.Thread(target=run_loop, name="notedex-mcp-loop", daemon=True)
    tools.start()
    try:
        loop.start()
        while loop.is_alive():
            # A signal the kernel gives another thread does not interrupt this wait: the timeout
            # bounds how late its handler runs.
            loop.join(STOP_CHECK_SECONDS)
    finally:
        tools.close()
    if failed:
        raise failed[0]
    return 0
