"""Package layout (metadata lives in pyproject.toml).

The Python package comes from python/opkit (each target carries its own templates and CMake in
opkit/targets/<name>/). opkit's bundled ops, scaffold templates and CMake modules live at the repository root (they are
user-facing folders); a wheel ships them as opkit/_share/{ops,templates,cmake}
so an installed opkit finds them next to its modules. opkit.workspace.share_dir() finds them in both
layouts (installed, or editable/source checkout).
"""
from setuptools import find_namespace_packages, setup

SHARED = {"ops": "ops", "templates": "templates", "cmake": "cmake"}

packages = find_namespace_packages("python", include=["opkit", "opkit.*"])
package_dir = {"": "python"}
package_data = {"opkit": ["include/**/*", "emulator/include/**/*", "**/*.h", "**/*.j2", "**/*.yaml", "**/*.cmake",
                      "csrc/*.cpp", "csrc/op/*.cpp", "quant/amct/zoo/*.pt", "quant/amct/zoo/*.json"]}
for name, folder in SHARED.items():
    # Every folder below is declared a package of its own: setuptools warns ("Package would be ignored")
    # about each importable-looking folder that is shipped as data but not listed.
    root = f"opkit._share.{name}"
    package_dir[root] = folder
    for pkg in [root] + [f"{root}.{sub}" for sub in find_namespace_packages(folder, exclude=["*__pycache__*"])]:
        packages.append(pkg)
        package_data[pkg] = ["*", ".opkit-scaffold.yaml"]

setup(packages=packages, package_dir=package_dir, package_data=package_data,
      exclude_package_data={"": ["*__pycache__*", "*.pyc", "*.orig"]})
