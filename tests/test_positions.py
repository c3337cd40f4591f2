"""Positions computed one top-level statement at a time (`analysis.positions`) are libcst's own.

Each source is parsed by libcst and CPython; every node of every statement placed alone must
have the range libcst's whole-module pass gives it, and a statement whose start line cannot be
trusted must be left to that pass.
"""

from __future__ import annotations

import ast
from typing import Any

import libcst as cst
import pytest
from libcst.metadata import PositionProvider

from torchlint.analysis.positions import _NESTING, Positions

SOURCES = {
    "plain": "import torch\n\nx = torch.zeros(3)\ny = x.sum().item()\n",
    "header comments": "#!/usr/bin/env python\n# a comment\n\n\nimport os\n# lead\n\nos.getcwd()\n",
    "semicolons": "a = 1; b = 2\nc = (\n    a +\n    b\n)\n",
    "decorators": (
        "import functools\n\n\n# before\n@functools.lru_cache\n# between\n"
        "@functools.wraps(print)\n\ndef f(x):\n    # inside\n    return x\n"
    ),
    "class": (
        "class A:\n    '''doc'''\n\n    @property\n    def p(self):\n        if self:\n"
        "            return 1\n        # trailing\n\n    x = [\n        1,\n    ]\n"
    ),
    "continuation": "x = 1 + \\\n    2\nif x:\n    pass\nelse:\n    y = 3\n",
    "strings": 's = """\nline\n"""\n(\n"""\nx\n"""\n)\nt = f"{s!r}"\n',
    "crlf": "import torch\r\n\r\nx = torch.ones(2)\r\nfor i in range(2):\r\n    x += i\r\n",
    "async and with": (
        "async def g():\n    async with a as b, c:\n        await b\n\n"
        "with open('f') as h:\n    h.read()\n"
    ),
    "parenthesized decorator": "@(\n    print\n)\ndef f():\n    pass\n\n\nz = 1\n",
    "no trailing newline": "a = 1\nb = 2",
    "tabs and form feed": "if True:\n\tx = 1\n\x0c\ny = 2\n",
    "loop bodies": (
        "for epoch in range(3):\n    for x in data:  # batches\n        loss = f(x)\n"
        "        if loss:\n            loss.backward()\n        elif x:\n            pass\n"
        "        else:\n            y = (\n                1)\n    else:\n        z = 2\n"
        "while True:\n    with ctx() as c:\n        c.run(); break\n"
        "try:\n    a = 1\n    # kept\nexcept E:\n    a = 2\nfinally:\n    b = 3\n"
    ),
}


def _all_units(positions: Positions) -> list:
    """Every placeable statement: the module's, and those of the bodies of classes, functions,
    loops, `with`, `if` and `try` blocks."""
    units = list(positions._module_units().values())
    for unit in units:
        if isinstance(unit.statement, _NESTING):
            before = set(positions._module_units())
            units += [u for s, u in positions._block_units(unit).items() if s not in before]
    return units


def _unit(positions: Positions, statement: cst.CSTNode):
    return positions._module_units()[statement]


def _whole(module: cst.Module) -> Any:
    provider = PositionProvider()
    provider._gen_impl(module)
    return provider._computed


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_each_statement_alone_gives_the_whole_pass_ranges(name):
    source = SOURCES[name]
    module: Any = cst.parse_module(source)
    whole = _whole(module)
    positions = Positions(module, source, ast.parse(source))
    placed = [unit for unit in _all_units(positions) if positions._place(unit)]
    assert placed, "no statement could be placed alone"
    assert positions.ranges, "placing statements recorded no range"
    for node, found in positions.ranges.items():
        assert found == whole[node], f"{type(node).__name__}: {found} != {whole[node]}"


def test_a_statement_whose_line_is_wrong_is_left_to_the_whole_pass():
    """A parenthesized first decorator starts before the line CPython gives its expression:
    the statement's code does not match the source there, so it is not placed alone."""
    source = SOURCES["parenthesized decorator"]
    module: Any = cst.parse_module(source)
    positions = Positions(module, source, ast.parse(source))
    assert not positions._place(_unit(positions, module.body[0]))
    assert positions._place(_unit(positions, module.body[1]))


def test_the_last_statement_without_a_newline_is_left_to_the_whole_pass():
    source = SOURCES["no trailing newline"]
    module: Any = cst.parse_module(source)
    positions = Positions(module, source, ast.parse(source))
    assert positions._place(_unit(positions, module.body[0]))
    assert not positions._place(_unit(positions, module.body[1]))
    last = module.body[1]
    assert positions.range(last, lambda node: [module]) == _whole(module)[last]


def test_without_a_python_tree_every_range_comes_from_the_whole_pass():
    source = SOURCES["class"]
    module: Any = cst.parse_module(source)
    whole = _whole(module)
    positions = Positions(module, source, None)
    method = module.body[0].body.body[2]
    assert (
        positions.range(method, lambda node: [module.body[0].body, module.body[0], module])
        == (whole[method])
    )
    assert positions.ranges.keys() == whole.keys()


def test_a_node_found_through_its_ancestors_places_only_its_statement():
    source = SOURCES["plain"]
    module: Any = cst.parse_module(source)
    whole = _whole(module)
    positions = Positions(module, source, ast.parse(source))
    line = module.body[2]
    call = line.body[0].value
    assert positions.range(call, lambda node: [line.body[0], line, module]) == whole[call]
    assert module.body[0] not in positions.ranges  # the import was not generated


def test_a_node_in_a_method_places_only_the_innermost_statement_around_it():
    source = SOURCES["class"]
    module: Any = cst.parse_module(source)
    whole = _whole(module)
    positions = Positions(module, source, ast.parse(source))
    cls = module.body[0]
    method = cls.body.body[1]
    branch = method.body.body[0]
    line = branch.body.body[0]  # `return 1`
    ancestors = [branch.body, branch, method.body, method, cls.body, cls, module]
    assert positions.range(line, lambda node: ancestors) == whole[line]
    assert line in positions.ranges  # the statement of the `if` body that holds it, alone
    assert branch not in positions.ranges and method not in positions.ranges
    assert cls not in positions.ranges
    assert cls.body.body[2] not in positions.ranges
