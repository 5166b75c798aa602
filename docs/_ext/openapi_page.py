"""The REST reference page, rendered from the app's own OpenAPI document when the site is built.

``reference/rest.md`` holds the prose; this extension appends every operation (parameters, request
body, each documented answer) and every schema, read from ``create_app().openapi()``, so the page
cannot disagree with what the API server serves. A small renderer rather than sphinxcontrib-openapi:
FastAPI writes OpenAPI 3.1 (a nullable field is ``anyOf: [..., {"type": "null"}]``), which that
extension reads as 3.0, and the page needs only tables in the site's own style, whose schema links
Sphinx checks like any other reference.
"""

from __future__ import annotations

from typing import Any

PAGE = "reference/rest"
METHODS = ("get", "post", "put", "patch", "delete")
MOUNT = "/tessera"
"""Where the plugin mounts the app in Airflow's API server, when the document names no ``servers``."""


def _cell(text: Any) -> str:
    """One Markdown table cell: a single line, its pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _label(name: str) -> str:
    return f"rest-schema-{name.lower()}"


def _type(schema: dict[str, Any]) -> str:
    """A schema in a few words: a type, an array of a type, or a link to a named schema."""
    if not isinstance(schema, dict):  # `true`: JSON Schema's "anything"
        return "any"
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"{{ref}}`{name} <{_label(name)}>`"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            kinds = [_type(part) for part in schema[key] if part.get("type") != "null"]
            nullable = any(part.get("type") == "null" for part in schema[key])
            return " or ".join(kinds) + (" or null" if nullable else "")
    if schema.get("type") == "array":
        return f"array of {_type(schema.get('items', {}))}"
    if schema.get("type") == "object" and "additionalProperties" in schema:
        return f"object of {_type(schema['additionalProperties'])}"
    kind = str(schema.get("type", "any"))
    if "enum" in schema:
        kind += " (" + ", ".join(f"`{value}`" for value in schema["enum"]) + ")"
    if "format" in schema:
        kind += f" ({schema['format']})"
    return kind


def _bounds(schema: Any) -> str:
    if not isinstance(schema, dict):
        return ""
    words = {"minimum": "≥", "maximum": "≤", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
    found = [f"{sign} {schema[key]}" for key, sign in words.items() if key in schema]
    if "default" in schema and schema["default"] is not None:
        found.append(f"default `{schema['default']}`")
    return "; ".join(found)


def _described(description: str, schema: Any) -> str:
    """A field's description followed by its bounds and default, as one sentence."""
    extra = _bounds(schema)
    if not extra:
        return description
    return f"{description.strip().rstrip('.')}; {extra}" if description.strip() else extra


def _operation(method: str, path: str, operation: dict[str, Any], prefix: str) -> list[str]:
    lines = [f"### {method.upper()} `{prefix}{path}`", ""]
    if operation.get("description"):
        lines += [operation["description"].strip(), ""]
    parameters = operation.get("parameters", [])
    if parameters:
        lines += ["| parameter | in | type | required | description |", "|---|---|---|---|---|"]
        for parameter in parameters:
            schema = parameter.get("schema", {})
            description = _described(parameter.get("description") or schema.get("description", ""), schema)
            lines.append(
                f"| `{parameter['name']}` | {parameter['in']} | {_cell(_type(schema))} | "
                f"{'yes' if parameter.get('required') else 'no'} | {_cell(description)} |"
            )
        lines.append("")
    body = operation.get("requestBody")
    if body:
        for media, content in body.get("content", {}).items():
            lines += [f"Request body (`{media}`): {_type(content.get('schema', {}))}.", ""]
    lines += ["| answer | meaning | body |", "|---|---|---|"]
    for status, answer in sorted(operation.get("responses", {}).items()):
        schemas = [_type(content["schema"]) for content in answer.get("content", {}).values() if "schema" in content]
        lines.append(f"| {status} | {_cell(answer.get('description', ''))} | {_cell(', '.join(schemas))} |")
    return [*lines, ""]


def _schema(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"({_label(name)})=", f"### {name}", ""]
    if schema.get("description"):
        lines += [schema["description"].strip(), ""]
    properties = schema.get("properties", {})
    if properties:
        required = set(schema.get("required", []))
        lines += ["| field | type | required | description |", "|---|---|---|---|"]
        for field, spec in properties.items():
            description = _cell(_described(spec.get("description", "") if isinstance(spec, dict) else "", spec))
            lines.append(
                f"| `{field}` | {_cell(_type(spec))} | {'yes' if field in required else 'no'} | {description} |"
            )
    else:
        lines.append(f"Type: {_type(schema)}.")
    return [*lines, ""]


def render(document: dict[str, Any]) -> str:
    """The operations and schemas of an OpenAPI 3.1 document, as MyST Markdown."""
    servers = document.get("servers") or [{"url": MOUNT}]
    prefix = servers[0]["url"].rstrip("/")
    lines = ["## Operations", ""]
    for path, operations in document.get("paths", {}).items():
        for method in METHODS:
            if method in operations:
                lines += _operation(method, path, operations[method], prefix)
    lines += ["## Schemas", ""]
    for name, schema in sorted(document.get("components", {}).get("schemas", {}).items()):
        lines += _schema(name, schema)
    return "\n".join(lines)


def _append(app: Any, docname: str, source: list[str]) -> None:
    if docname == PAGE:
        from tessera.plugin.api.app import create_app

        source[0] += "\n\n" + render(create_app().openapi())


def setup(app: Any) -> dict[str, Any]:
    app.connect("source-read", _append)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
