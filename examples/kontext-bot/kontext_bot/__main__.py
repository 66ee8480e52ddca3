import asyncio
import sys

from kontext_bot.bot import answer

print(asyncio.run(answer(" ".join(sys.argv[1:]) or "What are our tasks?")))
