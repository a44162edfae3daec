/* SPDX-License-Identifier: Apache-2.0 */
/* Test module for tests/test_module_file: one of two builds that differ only
 * in what they answer, so a test can tell which file was really loaded. */
#include "config.h"

const char *mpce_test_which(void) __attribute__((visibility("default")));

const char *mpce_test_which(void)
{
    return "a";
}
