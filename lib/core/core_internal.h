/* Pieces of core shared between its files and not exported. */
#ifndef ROBOEST_CORE_INTERNAL_H
#define ROBOEST_CORE_INTERNAL_H

#include "roboest/core.h"

/* Registers a temporary output (the string must stay valid until untracked) so that
 * rb_outfiles_unlink_all removes it. -1 when the table is full or the process is being stopped
 * (the caller removes the file and fails). */
int rb_outfile_track(char *tmp_path);
/* Unregisters it (a string never tracked is fine); false when the signal handler may hold it (the string
 * must then be left alone: the process is being stopped). */
bool rb_outfile_untrack(char *tmp_path);
/* RB_EIO "<path>: is an input of this command (<input>); choose another output" when the guard is on
 * and `path` is a noted input (same device and inode, or the same resolved path). */
int rb_outfile_check_input(const char *path, rb_err *err);

#endif
