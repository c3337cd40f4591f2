"""Which torch symbol a name or attribute chain is, through the file's imports.

A light alias table built from the import statements the traversal meets, instead of
libcst's qualified-name metadata: that provider dominates the run time of linters that use
it, and rules only need `torch.nn.DataParallel` from `DP` or `T.nn.DataParallel`.
"""

from __future__ import annotations

import libcst as cst


def dotted(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of Names and Attributes, else None."""
    parts: list[str] = []
    # Exact types: both classes have no subclasses, and isinstance would go through ABCMeta.
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _module_name(node: cst.BaseExpression) -> str:
    return dotted(node) or ""


class ImportTable:
    """Local name -> fully qualified name, for every import in the file."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}

    def add(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = _module_name(alias.name)
                if alias.asname is not None:
                    self.aliases[_module_name(alias.asname.name)] = full
                else:  # `import torch.nn` binds `torch`
                    top = full.split(".")[0]
                    self.aliases[top] = top
            return
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = _module_name(node.module)
        for alias in node.names:
            name = _module_name(alias.name)
            local = _module_name(alias.asname.name) if alias.asname else name
            self.aliases[local] = f"{module}.{name}"

    def qualname(self, node: cst.BaseExpression) -> str | None:
        """The imported name `node` refers to, or None when it is not an imported name."""
        name = dotted(node)
        return None if name is None else self.resolve(name)

    def resolve(self, name: str) -> str | None:
        """`qualname` of a dotted name as written (`nn.Upsample`), kept as text by a fact."""
        head, _, rest = name.partition(".")
        full = self.aliases.get(head)
        if full is None:
            return None
        return f"{full}.{rest}" if rest else full

    def is_torch(self, node: cst.BaseExpression, *names: str) -> bool:
        """Whether `node` resolves to one of `names` (given as `torch.…` paths)."""
        return self.qualname(node) in names

    def alias_for(self, module: str) -> str | None:
        """The local name bound to `module` by a plain import (`import torch as T` -> `T`)."""
        for local, full in self.aliases.items():
            if full == module:
                return local
        return None

    @property
    def uses_torch(self) -> bool:
        return any(full == "torch" or full.startswith("torch.") for full in self.aliases.values())
