// SPDX-License-Identifier: MIT
import XCTest
