import Testing
import TestSupport

/// The suites that play in real time or load the machine on purpose (Chromium playing through
/// an AudioWorklet, 400 listeners and 300 slowloris connections, nginx in front of the origin),
/// run one test at a time among themselves: on a 2-core machine, one of them beside another
/// would starve the browser's audio thread and make a frame count or a deadline lie.
@Suite(.realTime, .serialized) enum RealTimeTests {}
