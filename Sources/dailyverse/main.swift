import DailyVerseCLI

DailyVerseCommand.main()
