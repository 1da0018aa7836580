/// An error caused by what someone gave the program (a flag, a file, a setting, a request), described in one line
/// that names the value at fault: what the person can act on.
///
/// Each edge maps these once. The command line prints the description as it is, with exit status 1
/// (`DailyVerseCLI`'s `DailyVerseCommand.exit(for:fromParser:)`); anything else is reported as it comes. The HTTP API turns them into 4xx
/// answers with a code and the same message.
public protocol UserFacingError: Error, CustomStringConvertible {}
