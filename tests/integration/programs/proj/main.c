#include <stdio.h>

#include "sum.h"

int main(void)
{
	printf("sum=%d\n", sum_to(100));
	return 0;
}
