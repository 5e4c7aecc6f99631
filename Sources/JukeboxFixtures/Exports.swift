// SPDX-License-Identifier: MIT
// The wait lives in a module of its own (no libsndfile), so the service's tests can have it
// without the test audio; everything that imports the fixtures keeps seeing it here.
@_exported import JukeboxWaiting
