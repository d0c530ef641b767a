"""python -m tools.explorers table   # the table of explorer kinds and fields (markdown) in tools/explorers/README.md
python -m tools.explorers js      # rewrite book/_static/explorer-contract.js from the schemas
"""
import sys

from tools.explorers import CONTRACT_JS, contract_js, table

command = sys.argv[1] if len(sys.argv) > 1 else ""
if command == "table":
    print(table())
elif command == "js":
    CONTRACT_JS.write_text(contract_js(), encoding="utf-8")
    print(f"wrote {CONTRACT_JS}")
else:
    sys.exit(__doc__)
