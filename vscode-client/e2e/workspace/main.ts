import { area, perimeter } from './geometry';

console.log(area(3, 4));
