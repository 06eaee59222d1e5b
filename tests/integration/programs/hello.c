#include <stdio.h>

int main(void)
{
	printf("hello from gcc\n");
	return 0;
}
