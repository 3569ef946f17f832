from hephaistus.workspace.symbols import python_imports, scan

PYTHON = '''\
import os, sys as system
from .helpers import tidy
from pkg.sub import thing

class Shape(Base):
    """A shape."""

    def __init__(self, name: str) -> None:
        self.name = name

    def area(self) -> float:
        return 0.0

    def _private(self):
        pass

    async def fetch(self, url,
                    timeout: float = 3.0,
                    retries: int = 2) -> bytes:
        pass

class _Hidden:
    def visible_only_if_class_is_public(self):
        pass

def build(items: list[str], *, strict: bool = False) -> "Shape":
    def inner():
        pass
    return Shape(items[0])

async def main():
    pass

def _helper():
    pass

def long_default(x=("a", "b")):
    pass
'''


def test_python_classes_methods_and_functions():
    assert scan("m.py", PYTHON) == [
        "class Shape(Base)",
        "  def __init__(name: str) -> None",
        "  def area() -> float",
        "  def fetch(url, timeout: float = 3.0, retries: int = 2) -> bytes",
        'def build(items: list[str], *, strict: bool = False) -> "Shape"',
        "async def main()",
        'def long_default(x=("a", "b"))',
    ]


def test_python_imports():
    assert python_imports(PYTHON) == ["os", "sys", ".helpers", "pkg.sub"]


def test_javascript_and_typescript():
    text = """\
export function render(props) {
export default class App extends Component {
export const MAX = 10;
interface Props { name: string }
export async function load(id: string): Promise<Item> {
  function nested() {}
"""
    assert scan("app.ts", text) == [
        "function render(props)",
        "class App extends Component",
        "const MAX",
        "interface Props",
        "function load(id: string): Promise<Item>",
    ]


def test_go_rust_java():
    go = "package main\n\nfunc (s *Server) Start(port int) error {\n}\n\ntype Server struct {\n"
    assert scan("main.go", go) == ["func (s *Server) Start(port int) error", "type Server struct"]
    rust = "pub struct Config {\n}\nimpl Config {\n    pub fn new() -> Self {\n}\npub fn run(c: &Config) {\n"
    assert scan("lib.rs", rust) == ["struct Config", "impl Config", "fn run(c: &Config)"]
    java = (
        "public class Greeter {\n    public String greet(String name) {\n"
        "        return name;\n    }\n}\n"
    )
    assert scan("Greeter.java", java) == ["class Greeter", "  String greet(String name)"]


def test_other_files_have_no_symbols():
    assert scan("README.md", "def not_code():\n") == []


def test_a_methods_self_or_cls_is_left_out_and_nothing_else():
    source = (
        "class K:\n"
        "    def a(cls, x): ...\n"
        "    def b(self: 'K') -> None: ...\n"
        "    def c(selfish, y): ...\n"
        "    def d(): ...\n"
        "def top(self, z): ...\n"
    )
    assert scan("k.py", source) == [
        "class K",
        "  def a(x)",
        "  def b() -> None",
        "  def c(selfish, y)",
        "  def d()",
        "def top(self, z)",
    ]
