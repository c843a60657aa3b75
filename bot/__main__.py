from bot.cli import run

run()
