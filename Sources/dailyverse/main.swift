import DailyVerseCLI

await DailyVerseCommand.runAsMain()
