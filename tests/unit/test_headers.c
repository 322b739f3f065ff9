/* SPDX-License-Identifier: BSD-2-Clause */
/* Every public header compiles alone with -Wall -Wextra -Werror (STYLE rule 11). */
#include <socktab/socktab.h>

int main(void)
{
	return socktab_sock_priv((struct socktab_sock *)0) != (void *)0;
}
