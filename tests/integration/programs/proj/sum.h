int sum_to(int n);
